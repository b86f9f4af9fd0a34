-- API keys end in an HMAC-SHA-256 tag under this deployment's key secret,
-- so a process refuses a made-up or forged key before it looks it up.
-- The secret is random, made here once; it is not a credential (a key is
-- still only as good as its stored hash), only a filter.
CREATE TABLE api_key_secret (
    singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    secret     bytea       NOT NULL CHECK (length(secret) >= 16),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Two version-4 uuids: 244 bits from the server's strong random source.
INSERT INTO api_key_secret (secret)
VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- Keys made before the tag carry a CRC-32 checksum that anyone can compute:
-- they keep working, and while any of them is live a key of their shape
-- is looked up.
ALTER TABLE api_key ADD COLUMN legacy_checksum boolean NOT NULL DEFAULT true;
ALTER TABLE api_key ALTER COLUMN legacy_checksum SET DEFAULT false;
