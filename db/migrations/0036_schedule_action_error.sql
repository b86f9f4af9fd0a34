-- Why an action started no run (its definition is gone, or its input no
-- longer fits the definition's input_schema); empty when it started one.
ALTER TABLE schedule_action ADD COLUMN error text NOT NULL DEFAULT '';
