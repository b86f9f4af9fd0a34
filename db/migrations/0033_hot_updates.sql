-- A tick rewrites its run's row, and a step's node row is rewritten when
-- the step is dispatched and when it ends. None of those updates change
-- an indexed column (a run's status changes only when it starts and
-- ends), so each can be a HOT update, adding no index entries, when the
-- row's page has room for the new version; full pages made about half of
-- them cold. Leaving a third of each new page free keeps room for them.
-- (Pages already full keep their fill until they are rewritten.)
ALTER TABLE run SET (fillfactor = 70);
ALTER TABLE run_node SET (fillfactor = 70);
