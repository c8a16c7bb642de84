-- 019: reserved for a migration of another branch of this round (the
-- coordinator drops this file when that branch's 019 is merged). Nothing.
SELECT 1;
