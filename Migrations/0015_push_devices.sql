-- The devices this store registered for mobile push (a `push` op adding channels), so that
-- signing out can remove each device's registrations: the next user of the device must not get
-- this user's notifications (docs/ios.md, "Signing out"). A `push` op removing the device forgets
-- it; one removing some channels keeps it (it may still have others). A row is written when the
-- op is queued, not when it is sent: removing a device that never got registered costs a request
-- and harms nothing.
CREATE TABLE push_devices (
    token TEXT NOT NULL,
    service TEXT NOT NULL,
    topic TEXT NOT NULL DEFAULT '',
    environment TEXT NOT NULL DEFAULT '',
    registered_at TEXT NOT NULL,
    PRIMARY KEY (token, service, topic, environment)
) WITHOUT ROWID;
