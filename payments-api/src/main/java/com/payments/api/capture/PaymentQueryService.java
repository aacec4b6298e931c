package com.payments.api.capture;

import com.payments.api.Merchant;
import com.payments.api.PaymentView;
import com.payments.api.RefundView;
import com.payments.api.common.Refusal;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.UUID;

/** Reads of the merchant API; another merchant's resource is not found, as a missing one is. */
@ApplicationScoped
public class PaymentQueryService {
    static final int MAX_LIST = 100;

    private final Pool pool;
    private final PaymentRepository payments;

    public PaymentQueryService(Pool pool, PaymentRepository payments) {
        this.pool = pool;
        this.payments = payments;
    }

    public Uni<PaymentView> payment(Merchant merchant, UUID id) {
        return payments.find(pool, merchant.id(), id).flatMap(p -> {
            if (p == null) {
                return Uni.createFrom().failure(Refusal.notFound());
            }
            return payments.refundsOf(pool, merchant.id(), id)
                    .map(refunds -> PaymentView.of(
                            p, refunds.stream().map(RefundView::of).toList()));
        });
    }

    /** The merchant's payments for an order id, newest first, at most 100 (without their refunds). */
    public Uni<List<PaymentView>> byOrderId(Merchant merchant, String orderId) {
        return payments.findByOrderId(pool, merchant.id(), orderId, MAX_LIST)
                .map(list -> list.stream().map(p -> PaymentView.of(p, null)).toList());
    }

    public Uni<RefundView> refund(Merchant merchant, UUID id) {
        return payments.findRefund(pool, merchant.id(), id).map(r -> {
            if (r == null) {
                throw Refusal.notFound();
            }
            return RefundView.of(r);
        });
    }
}
