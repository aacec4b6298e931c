-- webhook-delivery leases each endpoint's due deliveries separately (a bounded number per endpoint, fairly across
-- endpoints: docs/webhook-delivery.md "Concurrency"); this index finds an endpoint's due deliveries, oldest first.
CREATE INDEX webhook_deliveries_due_per_endpoint ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'PENDING';
