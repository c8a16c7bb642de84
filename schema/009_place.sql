-- 009: where a worker runs, from its HELLO (common/place.h): its host
-- name, its Slurm job and array task ("ARRAYJOB_TASK"), its Kubernetes
-- pod. '' when not known. A row is one token: workers sharing a token
-- share a row, which shows the latest login's place (each login's is in
-- its 'connect' event).
ALTER TABLE workers ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN slurm_job TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN slurm_array TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN pod TEXT NOT NULL DEFAULT '';
