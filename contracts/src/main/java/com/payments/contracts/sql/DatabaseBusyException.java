package com.payments.contracts.sql;

/**
 * A call waited longer than its budget for its statement to start ({@link StatementBatcher}): the database cannot
 * keep up. The statement never ran for it, so nothing of it is stored.
 */
public class DatabaseBusyException extends RuntimeException {
    public DatabaseBusyException(String message) {
        super(message, null, false, false);
    }
}
