-- V85's metadata_valid, the CHECK of payments.metadata and refunds.metadata, as plpgsql with the same rule. As a SQL
-- function it was parsed and planned again by every statement that inserts or updates a payment or a refund (PostgreSQL
-- 15 keeps no plan of a SQL function's body between statements, and tries to inline it first, which parses it once
-- more): about 90 µs of PostgreSQL's CPU per statement, which the capture path's batches shared only when requests
-- came together (docs/benchmarks.md, "Latency at 0 ms"). plpgsql plans its query once per session. Metadata is most
-- often '{}', which passes without running that query.
CREATE OR REPLACE FUNCTION metadata_valid(m jsonb) RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF m = '{}' THEN
        RETURN true;
    END IF;
    -- CASE, not AND: jsonb_each fails on anything but an object, and AND does not promise to test the type first.
    RETURN CASE WHEN jsonb_typeof(m) = 'object' THEN
               (SELECT count(*) <= 20
                       AND coalesce(bool_and(length(e.key) BETWEEN 1 AND 40
                                             AND e.key !~ '[[:cntrl:]]'
                                             AND jsonb_typeof(e.value) = 'string'
                                             AND length(e.value #>> '{}') <= 500
                                             AND (e.value #>> '{}') !~ '[[:cntrl:]]'), true)
                  FROM jsonb_each(m) AS e)
           ELSE false END;
END $$;
