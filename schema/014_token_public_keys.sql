-- 014: credentials are key pairs, shown in the TLS 1.3 handshake as client
-- certificates (common/chan.h): gpud keeps each credential's Ed25519 public
-- key and nothing that lets anyone log in. The old challenge login's stored
-- keys are dropped; their rows stay (name, role, date: the workers'
-- history) with no public key, so their credentials are refused with a
-- message, and `gpuctl token add NAME` gives such a name a new key.
CREATE TABLE tokens_new (
	name       TEXT    PRIMARY KEY,
	public_key BLOB    UNIQUE
		CHECK (public_key IS NULL OR length(public_key) = 32),
	revoked    INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
	created_at REAL    NOT NULL,
	role       TEXT    NOT NULL DEFAULT 'worker'
		CHECK (role IN ('worker', 'viewer', 'admin'))
);
INSERT INTO tokens_new (name, public_key, revoked, created_at, role)
	SELECT name, NULL, revoked, created_at, role FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;
