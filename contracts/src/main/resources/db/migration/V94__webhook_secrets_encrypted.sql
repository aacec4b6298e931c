-- Merchants' webhook signing secrets encrypted at rest (issue 37; docs/deployment.md "Webhook secrets key").
-- Expand step of expand/contract: this release writes only the encrypted columns, and payments-api's re-encryption job
-- seals the rows still in plaintext (and rows under a retired key id) with WEBHOOK_SECRETS_KEYS, which SQL cannot know.
-- The previous release keeps working against this schema: it still inserts (endpoint_id, secret) and reads secret;
-- nothing it writes or reads is dropped or made NOT NULL here.
-- The later contract migration, once every row is sealed (SELECT count(*) ... WHERE ciphertext IS NULL is 0; it
-- refuses to run otherwise) and no running release reads secret: DROP COLUMN secret, SET NOT NULL on key_id and
-- ciphertext, and drop the two transition checks below.

-- lint-exception: webhook_endpoint_secrets holds one or two rows per merchant endpoint: its rewrite, scan and lock last milliseconds
-- squawk-ignore-file adding-field-with-default, constraint-missing-not-valid, adding-serial-primary-key-field, require-concurrent-index-creation

ALTER TABLE webhook_endpoint_secrets
    -- the row's own id: the ciphertext's associated data (with endpoint_id), and the primary key once secret is gone
    ADD COLUMN id         uuid NOT NULL DEFAULT gen_random_uuid(),
    -- which key of WEBHOOK_SECRETS_KEYS sealed it
    ADD COLUMN key_id     text CHECK (key_id ~ '^[A-Za-z0-9_-]{1,32}$'),
    -- 12-byte nonce || AES-256-GCM ciphertext of the secret || 16-byte tag
    ADD COLUMN ciphertext bytea CHECK (length(ciphertext) BETWEEN 29 AND 1024),
    ADD CONSTRAINT webhook_endpoint_secrets_sealed_with_key CHECK ((key_id IS NULL) = (ciphertext IS NULL)),
    ADD CONSTRAINT webhook_endpoint_secrets_stored CHECK (secret IS NOT NULL OR ciphertext IS NOT NULL);

-- The plaintext was part of the primary key; a sealed row has none. Nothing joins or conflicts on the old key.
ALTER TABLE webhook_endpoint_secrets DROP CONSTRAINT webhook_endpoint_secrets_pkey;
ALTER TABLE webhook_endpoint_secrets ADD PRIMARY KEY (id);
-- lint-exception: the expand step: the previous release still writes secret, this one writes NULL there (docs/deployment.md, "Webhook secrets key": roll webhook-delivery first)
-- squawk-ignore ban-drop-not-null
ALTER TABLE webhook_endpoint_secrets ALTER COLUMN secret DROP NOT NULL;
-- The lease and the endpoint calls read an endpoint's secrets (the old primary key's leading column did this).
CREATE INDEX webhook_endpoint_secrets_endpoint ON webhook_endpoint_secrets (endpoint_id);
