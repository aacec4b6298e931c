package com.payments.psp;

/**
 * The first connection of a call's first attempt could not be made: nothing of the call reached the PSP. Raised only
 * by {@link PspHttp#attempts} for that one connect: once an attempt may have been written, a later attempt that cannot
 * connect proves nothing (the first may have charged), and its failure stays an ordinary one (outcome unknown).
 */
public class NeverSentException extends RuntimeException {
    public NeverSentException(Throwable connectFailure) {
        super("no connection to the PSP on the call's first attempt", connectFailure, false, false);
    }
}
