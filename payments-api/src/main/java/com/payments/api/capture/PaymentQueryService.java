package com.payments.api.capture;

import com.payments.api.Merchant;
import com.payments.api.PaymentView;
import com.payments.api.RefundView;
import com.payments.api.common.Page;
import com.payments.api.common.Refusal;
import com.payments.api.payment.PaymentRepository;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** Reads of the merchant API; another merchant's resource is not found, as a missing one is. */
@ApplicationScoped
public class PaymentQueryService {
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

    /** A page of the merchant's payments (of one order id unless it is null), without their refunds. */
    public Uni<Page.Slice<PaymentView>> payments(Merchant merchant, String orderId, Page page) {
        return payments.page(pool, merchant.id(), orderId, page)
                .map(slice -> new Page.Slice<>(
                        slice.data().stream().map(p -> PaymentView.of(p, null)).toList(), slice.hasMore()));
    }

    /** A page of the merchant's refunds (of one payment unless it is null). */
    public Uni<Page.Slice<RefundView>> refunds(Merchant merchant, UUID paymentId, Page page) {
        return payments.refundPage(pool, merchant.id(), paymentId, page)
                .map(slice -> new Page.Slice<>(
                        slice.data().stream().map(RefundView::of).toList(), slice.hasMore()));
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
