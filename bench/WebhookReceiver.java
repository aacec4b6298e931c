// A fast webhook receiver on loopback for bench/webhook-delivery.sh: answers every POST 200 at once and checks its
// Standard Webhooks signature (docs/merchant-webhooks.md) with the secret given; GET /stats answers "<requests> <bad signatures>".
// Vert.x core (from any service's class path), run as a single source file on one event loop per core:
//   java -cp <vertx-core and netty> bench/WebhookReceiver.java PORT SECRET
import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public final class WebhookReceiver extends AbstractVerticle {
    private static final AtomicLong requests = new AtomicLong();
    private static final AtomicLong bad = new AtomicLong();
    private static int port;
    private static byte[] key;
    private final Mac mac;

    public WebhookReceiver() throws GeneralSecurityException {
        mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
    }

    // by supplier, not by class name: the source launcher's class loader is not the one Vert.x would ask
    private static WebhookReceiver create() {
        try {
            return new WebhookReceiver();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void main(String[] args) {
        port = Integer.parseInt(args[0]);
        key = Base64.getDecoder().decode(args[1].substring("whsec_".length()));
        int loops = Runtime.getRuntime().availableProcessors();
        Vertx.vertx()
                .deployVerticle(WebhookReceiver::create, new DeploymentOptions().setInstances(loops))
                .onSuccess(id -> System.out.println("receiver listening on 127.0.0.1:" + port))
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    @Override
    public void start(io.vertx.core.Promise<Void> started) {
        vertx.createHttpServer()
                .requestHandler(this::handle)
                .listen(port, "127.0.0.1")
                .<Void>mapEmpty()
                .onComplete(started);
    }

    private void handle(HttpServerRequest request) {
        if (request.method().name().equals("GET")) {
            request.response().end(requests.get() + " " + bad.get() + "\n");
            return;
        }
        request.body().onSuccess(body -> {
            if (!signed(request, body)) {
                bad.incrementAndGet();
            }
            requests.incrementAndGet();
            request.response().setStatusCode(200).end();
        });
    }

    private boolean signed(HttpServerRequest request, Buffer body) {
        String id = request.getHeader("webhook-id");
        String timestamp = request.getHeader("webhook-timestamp");
        String signatures = request.getHeader("webhook-signature");
        if (id == null || timestamp == null || signatures == null) {
            return false;
        }
        mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
        byte[] expected = mac.doFinal(body.getBytes());
        for (String entry : signatures.split(" ")) {
            try {
                if (entry.startsWith("v1,")
                        && MessageDigest.isEqual(expected, Base64.getDecoder().decode(entry.substring(3)))) {
                    return true;
                }
            } catch (IllegalArgumentException notBase64) {
                // another entry may match
            }
        }
        return false;
    }
}
