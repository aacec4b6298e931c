package com.payments.api.expiry;

import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.Started;
import com.payments.contracts.SqlResource;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The expiry job's claim of authorizations not captured in time (sql/expiry-claim.sql). */
@ApplicationScoped
public class ExpiryRepository {
    private static final String CLAIM = SqlResource.load(ExpiryRepository.class, "expiry-claim.sql");

    /**
     * Moves up to {@code limit} payments AUTHORIZED longer than {@code expireAfter} to EXPIRING, guarded as a capture's
     * start, and returns them as they left AUTHORIZED; the resolver takes over any of them still EXPIRING after
     * {@code stuckAfter}.
     */
    public Uni<List<Started>> claim(
            SqlClient client, Duration expireAfter, int limit, Duration stuckAfter, String actor) {
        return client.preparedQuery(CLAIM)
                .execute(Tuple.of(expireAfter.toMillis() / 1000.0, limit, stuckAfter.toMillis() / 1000.0, actor))
                .map(rows -> {
                    List<Started> out = new ArrayList<>();
                    for (Row row : rows) {
                        out.add(new Started(
                                PaymentRepository.from(row),
                                row.getInteger("attempts"),
                                null)); // no merchant key: the job
                    }
                    return out;
                });
    }
}
