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

-- name: WebSessionDeleteExpired :exec
DELETE FROM web_session WHERE expires_at <= now();

-- name: LoginAttemptCreate :exec
INSERT INTO login_attempt (token_hash, state, nonce, verifier, return_to, expires_at)
VALUES (@token_hash, @state, @nonce, @verifier, @return_to, now() + make_interval(secs => @ttl_seconds::float8));

-- name: LoginAttemptTake :one
-- Takes a live attempt: the row is deleted, so a callback works once.
DELETE FROM login_attempt
WHERE token_hash = @token_hash
RETURNING *, (expires_at > now())::boolean AS live;

-- name: LoginAttemptDeleteExpired :exec
DELETE FROM login_attempt WHERE expires_at <= now();
