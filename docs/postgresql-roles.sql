-- postgresql-roles.sql — what an operator runs, as the owner of the
-- database cordon's shared store lives in, to let hosts write to it.
-- The schema itself is made by cordon on its first connection as the
-- owner (e.g. `cordon log verify --audit postgresql://OWNER@DBHOST/cordon`).
--
-- One group role holds the rights every host needs; one login role per
-- host, mapped to the one audit chain it may append to (the host name
-- cordon writes in each record's host field).  Writers can insert audit
-- records and read them, never update or delete them, and row-level
-- security refuses a record for another host's chain.  State tables
-- (approvals, grants, pins, proposals) are shared read-write: that is why
-- a decision on a held call, a temporary grant and a tool definition's
-- approval count only when signed with the key the policy pins for their
-- approver (approvers.keys; cordon approvals keygen) or a console key
-- (approvers.consoles), and an unsigned one is never taken through this
-- store; a proposal's tree and layer carry a MAC only the host that made
-- it can check.
CREATE ROLE cordon_writer NOLOGIN;
GRANT USAGE ON SCHEMA public TO cordon_writer;
GRANT SELECT ON cordon_schema, audit_writers TO cordon_writer;
GRANT SELECT, INSERT ON audit_records TO cordon_writer;
GRANT SELECT, INSERT, UPDATE ON audit_meta TO cordon_writer;
GRANT SELECT, INSERT, UPDATE ON temp_grants, approvals, mcp_pins, proposals, proposal_files
      TO cordon_writer;
-- The console's one-time login links: taken by deleting them; each row
-- carries the console's MAC (console-session.key), so a writer's own row
-- logs no one in.  Its sessions, MACed the same way, outlive a restart.
GRANT SELECT, INSERT, DELETE ON console_logins TO cordon_writer;
GRANT SELECT, INSERT, DELETE ON console_sessions TO cordon_writer;
GRANT USAGE ON SEQUENCE proposals_seq_seq TO cordon_writer;

-- Per host (repeat with each host's name and a password of its own):
--   CREATE ROLE cordon_host_a LOGIN PASSWORD '...' IN ROLE cordon_writer;
--   INSERT INTO audit_writers (role, host) VALUES ('cordon_host_a', 'host-a');
