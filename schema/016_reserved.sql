-- 016: reserved. This branch (rates) was given migration 017; other
-- branches of the same round add the real 016. This no-op only keeps the
-- numbers without a gap until the merge, which drops this file.
SELECT 1;
