package com.payments.api.merchants;

import com.payments.api.config.ApiConfig;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigUtils;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.UUID;

/**
 * Demo merchants with documented test keys (docs/api.md), created at startup when {@code payments.demo.enabled}
 * is on: local runs and tests. The prod profile refuses to start with it.
 */
@ApplicationScoped
public class DemoMerchants {
    public static final UUID MERCHANT_A = UUID.fromString("00000000-0000-4000-8000-00000000000a");
    public static final UUID MERCHANT_B = UUID.fromString("00000000-0000-4000-8000-00000000000b");
    public static final String KEY_A = "sk_test_demo_merchant_a";
    public static final String KEY_B = "sk_test_demo_merchant_b";
    static final int DEMO_RATE = 100_000;

    private final ApiConfig config;
    private final MerchantAdminService admin;

    public DemoMerchants(ApiConfig config, MerchantAdminService admin) {
        this.config = config;
        this.admin = admin;
    }

    void onStart(@Observes StartupEvent event) {
        if (!config.demo().enabled()) {
            return;
        }
        if (ConfigUtils.isProfileActive("prod")) {
            throw new IllegalStateException("payments.demo.enabled must not be set in the prod profile");
        }
        // Startup runs on the main thread, not on the event loop: waiting is allowed here.
        admin.ensureMerchant(MERCHANT_A, "Demo merchant A", DEMO_RATE, KEY_A)
                .chain(() -> admin.ensureMerchant(MERCHANT_B, "Demo merchant B", DEMO_RATE, KEY_B))
                .await()
                .atMost(Duration.ofSeconds(30));
        Log.infof("Demo merchants ready: %s and %s (test keys in docs/api.md)", MERCHANT_A, MERCHANT_B);
    }
}
