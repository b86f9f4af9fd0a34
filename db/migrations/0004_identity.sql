-- People, their tenants and roles, dashboard sessions, and the audit log.
--
-- A person is known by the verified email of their OIDC login. Membership
-- is keyed by email, not by user id, so a person can be added to a tenant
-- (by an owner, an admin or `ductor member add`) before their first login.

CREATE TABLE app_user (
    id            uuid        PRIMARY KEY,
    -- email is stored lower-cased; it is the verified email of the login.
    email         text        NOT NULL UNIQUE CHECK (email = lower(email) AND email LIKE '%@%'),
    name          text        NOT NULL DEFAULT '',
    oidc_issuer   text        NOT NULL DEFAULT '',
    oidc_subject  text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_login_at timestamptz
);

CREATE TABLE membership (
    tenant_id  uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    email      text        NOT NULL CHECK (email = lower(email) AND email LIKE '%@%'),
    role       text        NOT NULL
                           CHECK (role IN ('owner', 'admin', 'editor', 'operator', 'approver', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, email)
);

CREATE INDEX membership_email_idx ON membership (email);

-- A dashboard session. The cookie carries a random token; only its SHA-256
-- is stored, so a leaked table does not leak live sessions.
CREATE TABLE web_session (
    token_hash bytea       PRIMARY KEY,
    user_id    uuid        NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    -- csrf_token is echoed in every form of the session and checked on
    -- every state-changing request.
    csrf_token text        NOT NULL,
    -- id_token is the provider's ID token, kept for RP-initiated logout.
    id_token   text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

CREATE INDEX web_session_user_idx ON web_session (user_id);
CREATE INDEX web_session_expires_idx ON web_session (expires_at);

-- An OIDC login in flight: what the callback must check. The browser holds
-- a random token in a short-lived cookie; only its hash is stored. A row is
-- taken (deleted) by the first callback that presents it.
CREATE TABLE login_attempt (
    token_hash bytea       PRIMARY KEY,
    state      text        NOT NULL,
    nonce      text        NOT NULL,
    verifier   text        NOT NULL,
    return_to  text        NOT NULL DEFAULT '',
    expires_at timestamptz NOT NULL
);

CREATE TABLE audit_log (
    tenant_id uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id        bigint      GENERATED ALWAYS AS IDENTITY,
    at        timestamptz NOT NULL DEFAULT now(),
    -- actor is who acted: user:EMAIL, key:PREFIX or cli.
    actor     text        NOT NULL,
    -- action is a dotted name such as api_key.create or member.role.
    action    text        NOT NULL,
    target    text        NOT NULL DEFAULT '',
    details   jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX audit_log_at_idx ON audit_log (tenant_id, at DESC);
