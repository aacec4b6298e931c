// The README's walkthrough through the generated TypeScript client (typescript-fetch; docs/clients.md): capture,
// replay with the same key, the same key with another amount (422), refund, and reading the refund until SUCCEEDED;
// then manual capture (authorize, capture part, replay, refunds within and above the captured amount, cancel).
// Exit code 0 when every step behaved as documented. Arguments: API base URL, merchant API key.
import {
  ApiResponse,
  Configuration,
  PaymentsApi,
  Problem,
  RefundsApi,
  ResponseError,
} from "../target/typescript-client";

// Node's globals, declared here instead of installing @types/node for two of them.
declare const process: { argv: string[]; exit(code: number): never };

const basePath = process.argv[2] ?? "http://127.0.0.1:8080";
const apiKey = process.argv[3] ?? "sk_test_demo_merchant_a";
const config = new Configuration({ basePath, accessToken: apiKey });
const payments = new PaymentsApi(config);
const refunds = new RefundsApi(config);
// Base 36: a 13-digit run could pass for a card number, which the API refuses (docs/api.md).
const run = `ts-${Date.now().toString(36)}`;

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`walkthrough FAILED: ${message}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function poll(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    if (await condition()) return;
    await sleep(500);
  }
  throw new Error(`walkthrough FAILED: not reached within 60 s: ${what}`);
}

// Sends a request again, with the same Idempotency-Key, when its answer was lost (network error) or says to retry
// (409 idempotency_key_in_use, 429, 503): a retry with the same key never charges twice.
async function withRetries<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      const status = e instanceof ResponseError ? e.response.status : 0;
      if (![0, 409, 429, 503].includes(status) || attempt === 5) throw e;
      const retryAfter = e instanceof ResponseError ? e.response.headers.get("Retry-After") : null;
      await sleep(retryAfter ? Number(retryAfter) * 1000 : 1000);
    }
  }
}

// A refusal is a ResponseError whose body is application/problem+json with a stable code.
async function problemOf(e: unknown): Promise<{ status: number; problem: Problem }> {
  if (!(e instanceof ResponseError)) throw e;
  return { status: e.response.status, problem: (await e.response.json()) as Problem };
}

async function main(): Promise<void> {
  console.log("\n--- 1. create a payment of 25.00 EUR");
  const capture = { orderId: `order-${run}`, amount: 2500, currency: "EUR", source: "tok_visa" };
  const paymentKey = `pay-${run}`;
  const first: ApiResponse<unknown> = await withRetries(() =>
    payments.createPaymentRaw({ idempotencyKey: paymentKey, captureRequest: capture }),
  );
  const payment = await (first as Awaited<ReturnType<typeof payments.createPaymentRaw>>).value();
  console.log(first.raw.status, JSON.stringify(payment));
  if (first.raw.status === 202) {
    console.log("outcome unknown for now; waiting for the resolver");
    await poll(async () => (await payments.getPayment({ id: payment.id! })).status === "CAPTURED", "payment CAPTURED");
  } else {
    check(first.raw.status === 201, `expected 201, got ${first.raw.status}`);
    check(payment.status === "CAPTURED", "payment not CAPTURED");
  }

  console.log("\n--- 2. replay it with the same key: same payment, Idempotent-Replayed: true");
  const replay = await withRetries(() =>
    payments.createPaymentRaw({ idempotencyKey: paymentKey, captureRequest: capture }),
  );
  const replayed = await replay.value();
  console.log(replay.raw.status, replay.raw.headers.get("Idempotent-Replayed"));
  check(replay.raw.status === 201, `replay answered ${replay.raw.status}`);
  check(replayed.id === payment.id, "replay is another payment");
  check(replay.raw.headers.get("Idempotent-Replayed") === "true", "no Idempotent-Replayed: true");

  console.log("\n--- 3. the same key with another amount: 422 idempotency_key_reused");
  await expectProblem(
    () => payments.createPayment({ idempotencyKey: paymentKey, captureRequest: { ...capture, amount: 9999 } }),
    422,
    "idempotency_key_reused",
  );

  console.log("\n--- 4. refund 10.00 EUR of it");
  const accepted = await withRetries(() =>
    refunds.createRefundRaw({
      id: payment.id!,
      idempotencyKey: `refund-${run}`,
      refundRequest: { amount: 1000, reason: "walkthrough" },
    }),
  );
  const reserved = await accepted.value();
  console.log(accepted.raw.status, JSON.stringify(reserved));
  check(accepted.raw.status === 202, `expected 202, got ${accepted.raw.status}`);

  console.log("\n--- 5. read the refund until SUCCEEDED");
  await poll(async () => (await payments.getRefund({ id: reserved.refundId! })).status === "SUCCEEDED", "refund SUCCEEDED");
  console.log(JSON.stringify(await payments.getRefund({ id: reserved.refundId! })));
  const after = await payments.getPayment({ id: payment.id! });
  check(after.refundableAmount === 1500, `refundableAmount ${after.refundableAmount}`);

  await manualCapture();

  console.log("\ntypescript client walkthrough: all steps passed");
}

// A manual payment of 40.00 EUR, AUTHORIZED (waiting for the resolver when the PSP's answer was lost).
async function authorize(orderId: string, idempotencyKey: string): Promise<string> {
  const answer = await withRetries(() =>
    payments.createPaymentRaw({
      idempotencyKey,
      captureRequest: { orderId, amount: 4000, currency: "EUR", source: "tok_visa", captureMethod: "manual" },
    }),
  );
  const authorized = await answer.value();
  console.log(answer.raw.status, JSON.stringify(authorized));
  if (answer.raw.status === 202) {
    console.log("outcome unknown for now (AUTHORIZING); waiting for the resolver");
    await poll(async () => (await payments.getPayment({ id: authorized.id! })).status === "AUTHORIZED", "payment AUTHORIZED");
  } else {
    check(answer.raw.status === 201, `expected 201, got ${answer.raw.status}`);
    check(authorized.status === "AUTHORIZED", "payment not AUTHORIZED");
  }
  check(authorized.captureMethod === "manual", `captureMethod ${authorized.captureMethod}`);
  return authorized.id!;
}

async function expectProblem(call: () => Promise<unknown>, expectedStatus: number, code: string): Promise<void> {
  try {
    await call();
  } catch (e) {
    const { status, problem } = await problemOf(e);
    console.log(status, JSON.stringify(problem));
    check(status === expectedStatus, `expected ${expectedStatus}, got ${status}`);
    check(problem.code === code, `code ${problem.code}`);
    return;
  }
  check(false, `accepted, expected ${expectedStatus} ${code}`);
}

// The README's steps 8-14: authorize, capture part of it, replay the capture, refund within the captured amount and
// above it, cancel another authorization and refund it.
async function manualCapture(): Promise<void> {
  console.log("\n--- 8. authorize 40.00 EUR with captureMethod manual");
  const id = await authorize(`order-${run}-m`, `auth-${run}`);
  check((await payments.getPayment({ id })).refundableAmount === 0, "an authorization has nothing to refund");

  console.log("\n--- 9. capture 30.00 EUR of it");
  const capture = { id, idempotencyKey: `capture-${run}`, manualCaptureRequest: { amount: 3000 } };
  const captured = await withRetries(() => payments.captureAuthorizationRaw(capture));
  // The bytes as sent, to compare the replay with (value() consumes the body).
  const capturedBytes = await captured.raw.clone().text();
  console.log(captured.raw.status, capturedBytes);
  if (captured.raw.status === 202) {
    console.log("outcome unknown for now (CAPTURING); waiting for the resolver");
    await poll(async () => (await payments.getPayment({ id })).status === "CAPTURED", "payment CAPTURED");
  } else {
    check(captured.raw.status === 200, `expected 200, got ${captured.raw.status}`);
  }
  const after = await payments.getPayment({ id });
  check(after.status === "CAPTURED", "payment not CAPTURED");
  check(after.capturedAmount === 3000, `capturedAmount ${after.capturedAmount}`);
  check(after.refundableAmount === 3000, `refundableAmount ${after.refundableAmount}`);

  console.log("\n--- 10. replay the capture with the same key: the same bytes, Idempotent-Replayed: true");
  const replay = await withRetries(() => payments.captureAuthorizationRaw(capture));
  const replayBytes = await replay.raw.text();
  console.log(replay.raw.status, replay.raw.headers.get("Idempotent-Replayed"));
  check(replay.raw.status === 200, `replay answered ${replay.raw.status}`);
  check(captured.raw.status === 202 || replayBytes === capturedBytes, "replay differs from the first answer");
  check(replay.raw.headers.get("Idempotent-Replayed") === "true", "no Idempotent-Replayed: true");

  console.log("\n--- 11. refund 10.00 EUR of the captured 30.00");
  const accepted = await withRetries(() =>
    refunds.createRefundRaw({ id, idempotencyKey: `refund-${run}-m1`, refundRequest: { amount: 1000 } }),
  );
  const reserved = await accepted.value();
  console.log(accepted.raw.status, JSON.stringify(reserved));
  check(accepted.raw.status === 202, `expected 202, got ${accepted.raw.status}`);
  await poll(async () => (await payments.getRefund({ id: reserved.refundId! })).status === "SUCCEEDED", "refund SUCCEEDED");
  const refunded = await payments.getPayment({ id });
  check(refunded.refundableAmount === 2000, `refundableAmount ${refunded.refundableAmount}`);

  console.log("\n--- 12. refund 35.00 EUR, above the captured 30.00: 422 refund_exceeds_refundable");
  await expectProblem(
    () => refunds.createRefund({ id, idempotencyKey: `refund-${run}-m2`, refundRequest: { amount: 3500 } }),
    422,
    "refund_exceeds_refundable",
  );

  console.log("\n--- 13. authorize another 40.00 EUR and cancel it");
  const voided = await authorize(`order-${run}-c`, `auth-${run}-c`);
  const canceled = await withRetries(() =>
    payments.cancelAuthorizationRaw({ id: voided, idempotencyKey: `cancel-${run}` }),
  );
  const canceledPayment = await canceled.value();
  console.log(canceled.raw.status, JSON.stringify(canceledPayment));
  if (canceled.raw.status === 202) {
    console.log("outcome unknown for now (CANCELING); waiting for the resolver");
    await poll(async () => (await payments.getPayment({ id: voided })).status === "CANCELED", "payment CANCELED");
  } else {
    check(canceled.raw.status === 200, `expected 200, got ${canceled.raw.status}`);
    check(canceledPayment.status === "CANCELED", "payment not CANCELED");
  }

  console.log("\n--- 14. refund the canceled payment: 422 payment_not_refundable");
  await expectProblem(
    () => refunds.createRefund({ id: voided, idempotencyKey: `refund-${run}-c`, refundRequest: { amount: 1000 } }),
    422,
    "payment_not_refundable",
  );
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
