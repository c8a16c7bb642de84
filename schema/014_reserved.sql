-- 014: reserved. This branch (store) was given migration 015; another
-- branch of the same round adds the real 014. This no-op only keeps the
-- numbers without a gap until the merge, which drops this file.
SELECT 1;
