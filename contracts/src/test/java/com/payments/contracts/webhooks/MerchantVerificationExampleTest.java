package com.payments.contracts.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java verifier that docs/merchant-webhooks.md shows merchants, compiled from the doc's own code block and run against
 * signatures computed elsewhere: the Standard Webhooks specification's vector and two made with openssl (the
 * commands in the comments), so a doc change that breaks verification fails here.
 */
class MerchantVerificationExampleTest {
    private static final Path DOC = Path.of("..", "docs", "merchant-webhooks.md");
    private static final Pattern JAVA_BLOCK =
            Pattern.compile("<!-- MerchantVerificationExampleTest [^>]*-->\\s*```java\\n(.*?)```", Pattern.DOTALL);

    // The specification's vector (https://github.com/standard-webhooks/standard-webhooks, spec and libraries' tests).
    private static final String SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    private static final String SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    private static final String SPEC_TIMESTAMP = "1614265330";
    private static final String SPEC_BODY = "{\"test\": 2432232314}";
    private static final String SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    // An event body with non-ASCII metadata, signed with the old (SPEC_SECRET) and the new secret of a rotation:
    //   key=$(printf %s "${SECRET#whsec_}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
    //   printf %s "$ID.$TIMESTAMP.$BODY" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | base64
    private static final String NEW_SECRET = "whsec_cm90YXRlZC1zZWNyZXQtZm9yLXRoZS1kb2MtdGVzdHM=";
    private static final String ID = "5f1c2a9e-6d7b-4c1e-9a51-0c2f1d7e8b34";
    private static final String TIMESTAMP = "1796212801";
    private static final String BODY = "{\"id\":\"5f1c2a9e-6d7b-4c1e-9a51-0c2f1d7e8b34\",\"type\":\"PaymentCaptured\","
            + "\"createdAt\":\"2026-12-02T12:00:01.123456Z\",\"data\":{\"type\": \"PaymentCaptured\", \"amount\": 1999, "
            + "\"eventId\": \"5f1c2a9e-6d7b-4c1e-9a51-0c2f1d7e8b34\", \"orderId\": \"order-42\", \"currency\": \"EUR\", "
            + "\"metadata\": {\"cart\": \"ünïcødé\"}}}";
    private static final String OLD_SIGNATURE = "v1,tySB4ednmU4gMa0RG163Ov96gglTwGvjd5XEKNnL+vM=";
    private static final String NEW_SIGNATURE = "v1,ay5UkHAtGNAUgn3Wmm95zkFLNNAeVSe2jJcpAucN4z0=";
    private static final String ROTATION_HEADER = OLD_SIGNATURE + " " + NEW_SIGNATURE;

    @TempDir
    static Path classes;

    private static Constructor<?> verifier;
    private static Method verify;

    @BeforeAll
    static void compileTheDocsVerifier() throws Exception {
        Matcher block = JAVA_BLOCK.matcher(Files.readString(DOC));
        assertThat(block.find()).as("the Java block of " + DOC).isTrue();
        Path source = classes.resolve("WebhookVerifier.java");
        Files.writeString(source, block.group(1));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac.run(null, null, null, "-d", classes.toString(), source.toString()))
                .as("javac of the doc's verifier")
                .isZero();
        Class<?> type = new URLClassLoader(new URL[] {classes.toUri().toURL()}).loadClass("WebhookVerifier");
        verifier = type.getConstructor(String.class);
        verify = type.getMethod("verify", String.class, String.class, String.class, byte[].class, Instant.class);
    }

    private static boolean verifies(String secret, String id, String timestamp, String header, String body, Instant now)
            throws Exception {
        return (boolean) verify.invoke(
                verifier.newInstance(secret), id, timestamp, header, body.getBytes(StandardCharsets.UTF_8), now);
    }

    private static Instant at(String timestamp, long offsetSeconds) {
        return Instant.ofEpochSecond(Long.parseLong(timestamp) + offsetSeconds);
    }

    @Test
    void theSpecificationsVectorVerifies() throws Exception {
        assertThat(verifies(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_SIGNATURE, SPEC_BODY, at(SPEC_TIMESTAMP, 10)))
                .isTrue();
    }

    @Test
    void duringARotationEitherSecretVerifiesTheHeaderWithBothSignatures() throws Exception {
        Instant now = at(TIMESTAMP, 0);
        assertThat(verifies(SPEC_SECRET, ID, TIMESTAMP, ROTATION_HEADER, BODY, now))
                .isTrue();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, ROTATION_HEADER, BODY, now))
                .isTrue();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY, now))
                .isTrue();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, OLD_SIGNATURE, BODY, now))
                .as("the new secret alone does not verify the old secret's signature")
                .isFalse();
    }

    @Test
    void anyChangeOfBodyIdOrTimestampIsRefused() throws Exception {
        Instant now = at(TIMESTAMP, 0);
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY.replace("1999", "1998"), now))
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY.replace("\", \"", "\",\""), now))
                .as("re-serialized JSON")
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID.replace('5', '6'), TIMESTAMP, NEW_SIGNATURE, BODY, now))
                .isFalse();
        String otherTimestamp = String.valueOf(Long.parseLong(TIMESTAMP) + 1);
        assertThat(verifies(NEW_SECRET, ID, otherTimestamp, NEW_SIGNATURE, BODY, now))
                .isFalse();
        assertThat(verifies(SPEC_SECRET.replace('M', 'N'), ID, TIMESTAMP, OLD_SIGNATURE, BODY, now))
                .as("another secret")
                .isFalse();
    }

    @Test
    void timestampsMoreThanFiveMinutesAwayAreRefused() throws Exception {
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY, at(TIMESTAMP, 300)))
                .isTrue();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY, at(TIMESTAMP, -300)))
                .isTrue();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY, at(TIMESTAMP, 301)))
                .as("a replay after 5 minutes")
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, NEW_SIGNATURE, BODY, at(TIMESTAMP, -301)))
                .as("signed in the future")
                .isFalse();
    }

    @Test
    void malformedHeadersAreRefusedWithoutThrowing() throws Exception {
        Instant now = at(TIMESTAMP, 0);
        String bareSignature = NEW_SIGNATURE.substring(3);
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, "v2," + bareSignature, BODY, now))
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, bareSignature, BODY, now))
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, "", BODY, now)).isFalse();
        assertThat(verifies(NEW_SECRET, ID, "17962128O1", NEW_SIGNATURE, BODY, now))
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID, "-1", NEW_SIGNATURE, BODY, now)).isFalse();
        assertThat(verifies(NEW_SECRET, ID, "99999999999999999999", NEW_SIGNATURE, BODY, now))
                .isFalse();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, "v1,!!notbase64!! " + NEW_SIGNATURE, BODY, now))
                .as("a broken entry before a good one")
                .isTrue();
        assertThat(verifies(NEW_SECRET, ID, TIMESTAMP, "v1,!!notbase64!!", BODY, now))
                .isFalse();
    }

    @Test
    void theDocShowsTheVectorsThatTheBashCheckUses() throws IOException {
        String doc = Files.readString(DOC);
        assertThat(doc).contains(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY, SPEC_SIGNATURE);
    }
}
