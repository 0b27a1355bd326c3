-- Access Manager (docs/access.md).

-- The fingerprint of the token an op's last failure happened under (a short hash, never the token):
-- an op refused by Access Manager is dead-lettered only when it is refused again under a
-- different token, so a relaunch with the same (revoked) token leaves it waiting.
ALTER TABLE outbox ADD COLUMN last_error_token TEXT;
