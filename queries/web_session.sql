-- name: WebSessionCreate :one
-- The session expires ttl_seconds from now by the database's clock, which
-- is what WebSessionGet compares with.
INSERT INTO web_session (token_hash, user_id, csrf_token, id_token, expires_at)
VALUES (@token_hash, @user_id, @csrf_token, @id_token, now() + make_interval(secs => @ttl_seconds::float8))
RETURNING *;

-- name: WebSessionGet :one
-- A live session and its user.
SELECT sqlc.embed(s), sqlc.embed(u)
FROM web_session s
JOIN app_user u ON u.id = s.user_id
WHERE s.token_hash = @token_hash AND s.expires_at > now();

-- name: WebSessionDelete :one
DELETE FROM web_session WHERE token_hash = @token_hash RETURNING *;

-- name: WebSessionDeleteExpired :execrows
-- Deletes up to max_rows expired sessions, by the database's clock.
DELETE FROM web_session WHERE token_hash IN (
    SELECT e.token_hash FROM web_session e WHERE e.expires_at <= now() LIMIT @max_rows);

-- name: LoginAttemptCreate :exec
INSERT INTO login_attempt (token_hash, state, nonce, verifier, return_to, expires_at)
VALUES (@token_hash, @state, @nonce, @verifier, @return_to, now() + make_interval(secs => @ttl_seconds::float8));

-- name: LoginAttemptTake :one
-- Takes a live attempt: the row is deleted, so a callback works once.
DELETE FROM login_attempt
WHERE token_hash = @token_hash
RETURNING *, (expires_at > now())::boolean AS live;

-- name: LoginAttemptDeleteExpired :execrows
-- Deletes up to max_rows expired login attempts, by the database's clock.
DELETE FROM login_attempt WHERE token_hash IN (
    SELECT e.token_hash FROM login_attempt e WHERE e.expires_at <= now() LIMIT @max_rows);
