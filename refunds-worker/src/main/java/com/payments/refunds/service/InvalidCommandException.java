package com.payments.refunds.service;

/** A refund command that can never be executed (unparseable, unknown refund, disagrees with the database). */
public class InvalidCommandException extends RuntimeException {
    public InvalidCommandException(String message) {
        super(message);
    }
}
