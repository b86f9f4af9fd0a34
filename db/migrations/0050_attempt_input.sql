-- An attempt keeps the input it was started with: its step's settings as
-- the tick evaluated them (a task's handler and input, an http step's url,
-- headers and body), written by the worker that takes it, so that the
-- inspector shows what the attempt received beside the settings as
-- written. Attempts taken before this and bridge tasks have none.
ALTER TABLE run_attempt ADD COLUMN input jsonb;
