package bench.latency;

import static io.gatling.javaapi.core.CoreDsl.StringBody;
import static io.gatling.javaapi.core.CoreDsl.constantUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.scenario;
import static io.gatling.javaapi.http.HttpDsl.http;
import static io.gatling.javaapi.http.HttpDsl.status;

import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Simulation;
import io.gatling.javaapi.http.HttpProtocolBuilder;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * POST /v1/payments at a fixed arrival rate (open model): a new capture starts every 1/rate s whether or not the
 * earlier ones have been answered, so a slow answer delays no later request and every answer's time is the time its
 * client waited (no coordinated omission). Each capture has its own Idempotency-Key and orderId, as the harness's
 * capture.lua sends them. A warm-up phase at the same rate comes first; its requests are named "warmup" and
 * bench/latency.sh reads only the ones named "capture".
 *
 * <p>System properties (bench/latency.sh sets them): baseUrl, apiKey, runId, rate (captures per second),
 * warmupSeconds, durationSeconds.
 */
public class CaptureSimulation extends Simulation {

    private static final String BASE_URL = System.getProperty("baseUrl", "http://127.0.0.1:18180");
    private static final String API_KEY = System.getProperty("apiKey", "sk_test_m1");
    // keys "<runId>-c<n>": no run of 13 digits or more, which the API would refuse as a card number in the orderId
    private static final String RUN_ID =
            System.getProperty("runId", Integer.toHexString(ThreadLocalRandom.current().nextInt()));
    private static final double RATE = Double.parseDouble(System.getProperty("rate", "100"));
    private static final long WARMUP_SECONDS = Long.getLong("warmupSeconds", 10);
    private static final long DURATION_SECONDS = Long.getLong("durationSeconds", 20);

    private static final AtomicLong COUNTER = new AtomicLong();

    // One pool of kept-alive connections shared by all captures, as a merchant's backend keeps one; it opens another
    // connection whenever all are busy (no limit), so a request never waits for a connection on the client's side.
    private final HttpProtocolBuilder protocol = http.baseUrl(BASE_URL)
            .shareConnections()
            .contentTypeHeader("application/json")
            .authorizationHeader("Bearer " + API_KEY);

    public CaptureSimulation() {
        setUp(captures("warmup")
                        .injectOpen(constantUsersPerSec(RATE).during(Duration.ofSeconds(WARMUP_SECONDS)))
                        .andThen(captures("capture")
                                .injectOpen(constantUsersPerSec(RATE).during(Duration.ofSeconds(DURATION_SECONDS)))))
                .protocols(protocol)
                // a bound on the whole run: the phases, plus the request timeout of gatling.conf for the last ones
                .maxDuration(Duration.ofSeconds(WARMUP_SECONDS + DURATION_SECONDS + 30));
    }

    private static ScenarioBuilder captures(String name) {
        return scenario(name)
                .exec(session -> {
                    long n = COUNTER.incrementAndGet();
                    return session.set("key", RUN_ID + "-c" + n).set("amount", 100 + n % 99_900);
                })
                .exec(http(name)
                        .post("/v1/payments")
                        .header("Idempotency-Key", "#{key}")
                        .body(StringBody(
                                "{\"orderId\":\"ord-#{key}\",\"amount\":#{amount},\"currency\":\"EUR\",\"source\":\"tok_visa\"}"))
                        .check(status().is(201)));
    }
}
