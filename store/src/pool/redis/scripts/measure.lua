-- Measures a mode's pool for the project's live counter (see measure in
-- common.lua).
-- KEYS: 1 pool, 2 the mode's live version
-- Returns {pool size, version}.
return measure(KEYS[1], KEYS[2])
