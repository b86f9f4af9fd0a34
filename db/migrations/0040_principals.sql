-- Who acted, as a principal rather than a name anyone can choose.

-- created_by is the person who made the key in the dashboard; null for a
-- key made by an operator's command. A key acts as its maker toward
-- approvals: an approval needing two people needs two people, not one
-- person and a key they made.
ALTER TABLE api_key ADD COLUMN created_by uuid;

-- principal is who decided: user:ID for a person (and for a key a person
-- made), key:ID for a key an operator made. One decision per principal.
ALTER TABLE approval_decision ADD COLUMN principal text;
-- Decisions taken before: a person's by their user id, a key's by its
-- name, as it was counted then.
UPDATE approval_decision d SET principal = coalesce(
    (SELECT 'user:' || u.id FROM app_user u WHERE d.decided_by = 'user:' || u.email),
    d.decided_by);
ALTER TABLE approval_decision ALTER COLUMN principal SET NOT NULL;
CREATE UNIQUE INDEX approval_decision_principal_idx ON approval_decision (tenant_id, approval_id, principal);

-- updated_by is the actor of a case's last change (user:EMAIL, key:PREFIX),
-- empty until someone changes it.
ALTER TABLE run_case ADD COLUMN updated_by text NOT NULL DEFAULT '';
