-- name: UserUpsertLogin :one
-- Records a login: creates the user at their first login, by email.
INSERT INTO app_user (id, email, name, oidc_issuer, oidc_subject, last_login_at)
VALUES (@id, @email, @name, @oidc_issuer, @oidc_subject, now())
ON CONFLICT (email) DO UPDATE
SET name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE app_user.name END,
    oidc_issuer = excluded.oidc_issuer,
    oidc_subject = excluded.oidc_subject,
    last_login_at = now()
RETURNING *;

-- name: UserEnsure :one
-- Creates a user who has not logged in (the dev user), or returns them.
INSERT INTO app_user (id, email, name)
VALUES (@id, @email, @name)
ON CONFLICT (email) DO UPDATE SET email = excluded.email
RETURNING *;

-- name: UserGetByID :one
SELECT * FROM app_user WHERE id = @id;
