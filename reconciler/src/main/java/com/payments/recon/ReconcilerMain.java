package com.payments.recon;

import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;

/** One reconciliation run, then exit: the exit code is the Kubernetes Job's result. */
@QuarkusMain
public class ReconcilerMain implements QuarkusApplication {
    @Override
    public int run(String... args) {
        return 0;
    }
}
