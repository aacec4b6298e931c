-- V103's refunds_scheduled and V30's refunds_pending_unscheduled serve what V1's refunds_pending served (V103 says
-- why it goes). A release before V103 still runs with it gone: its statements only read slower, none fails.
DROP INDEX CONCURRENTLY IF EXISTS refunds_pending;
