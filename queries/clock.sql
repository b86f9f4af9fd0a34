-- name: ClockShiftSet :exec
-- Moves the database's clock (ductor_now) forward by shift; tests only.
INSERT INTO clock_shift (singleton, shift) VALUES (true, @shift::interval)
ON CONFLICT (singleton) DO UPDATE SET shift = EXCLUDED.shift;
