-- Reconciler debounce by time (issue 18): a break is reported only once it has been seen by every run of its date for
-- at least recon.report-after (docs/reconciler.md), so a Job retry or a manual re-run minutes later is not the second
-- sighting. opened_at is when the current streak of sightings began: the first sighting, or the reopening of a
-- RESOLVED break. Expand only: the previous release does not write it (the default fills it) and does not read it.
ALTER TABLE recon_breaks ADD COLUMN opened_at timestamptz;
UPDATE recon_breaks SET opened_at = created_at;
ALTER TABLE recon_breaks ALTER COLUMN opened_at SET DEFAULT now(), ALTER COLUMN opened_at SET NOT NULL;
