-- Merchant metadata on payments and refunds, and the indexes of the paginated lists (issue 24, docs/api.md
-- "Metadata" and "Lists").

-- The rule the API enforces (payments-api common/Metadata), kept here too: a JSON object of at most 20 keys of 1-40
-- characters, each value a string of at most 500 characters, no control characters in keys or values.
CREATE FUNCTION metadata_valid(m jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- CASE, not AND: jsonb_each fails on anything but an object, and AND does not promise to test the type first.
    SELECT CASE WHEN jsonb_typeof(m) = 'object' THEN
               (SELECT count(*) <= 20
                       AND coalesce(bool_and(length(e.key) BETWEEN 1 AND 40
                                             AND e.key !~ '[[:cntrl:]]'
                                             AND jsonb_typeof(e.value) = 'string'
                                             AND length(e.value #>> '{}') <= 500
                                             AND (e.value #>> '{}') !~ '[[:cntrl:]]'), true)
                  FROM jsonb_each(m) AS e)
           ELSE false END
$$;

-- '{}' when the merchant sent none. The CHECKs are added NOT VALID: every existing row holds the constant default,
-- which passes, so no scan of the tables is needed under the ALTER's exclusive lock; new and updated rows are
-- checked all the same.
ALTER TABLE payments ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE payments ADD CONSTRAINT payments_metadata_valid CHECK (metadata_valid(metadata)) NOT VALID;
ALTER TABLE refunds ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE refunds ADD CONSTRAINT refunds_metadata_valid CHECK (metadata_valid(metadata)) NOT VALID;

-- GET /v1/payments and GET /v1/refunds: a merchant's rows newest first, by (created_at, id), from a cursor row on.
-- With ?orderId= the order's index is extended to the same order (it replaces V1's payments_merchant_order, which
-- is its prefix). IF NOT EXISTS: on a large table an operator may build them beforehand with CREATE INDEX
-- CONCURRENTLY under these names (docs/operations.md), and the migration then only drops the old index.
CREATE INDEX IF NOT EXISTS payments_merchant_created ON payments (merchant_id, created_at, id);
CREATE INDEX IF NOT EXISTS payments_merchant_order_created ON payments (merchant_id, order_id, created_at, id);
DROP INDEX payments_merchant_order;
CREATE INDEX IF NOT EXISTS refunds_merchant_created ON refunds (merchant_id, created_at, id);
CREATE INDEX IF NOT EXISTS refunds_payment_created ON refunds (payment_id, created_at, id);
DROP INDEX refunds_payment;
