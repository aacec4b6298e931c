-- V105's payments_expiry_due serves what V102's payments_authorized_expiry served (V105 says why it goes). A release
-- before V105 still runs with it gone: its expiry and resolver claims use V105's index, whose predicate they imply.
DROP INDEX CONCURRENTLY IF EXISTS payments_authorized_expiry;
