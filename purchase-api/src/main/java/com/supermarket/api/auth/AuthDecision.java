package com.supermarket.api.auth;

/**
 * What {@link TillAuthenticator#decide} answers: allowed, or the refusal with its HTTP status and
 * the message of the {@code {"message"}} body (which never echoes the key). Also the
 * {@code reason} tag of {@code api_till_auth_refused_total}.
 */
public enum AuthDecision {
    ALLOWED(200, ""),
    MISSING_KEY(401, "a till key is required: send the header 'Authorization: Bearer <key>'"),
    MALFORMED_HEADER(401, "the Authorization header must be 'Bearer <key>' with a key of visible ASCII characters"),
    UNKNOWN_KEY(401, "the key is not valid"),
    EXPIRED_KEY(401, "the key has been rotated out; use the store's new key"),
    OTHER_STORE(403, "the key belongs to another store"),
    MANAGER_CANNOT_POST(403, "a manager key reads figures; purchases need the store's till key"),
    MANAGER_ONLY(403, "the figures of every store need a manager key");

    private final int status;
    private final String message;

    AuthDecision(int status, String message) {
        this.status = status;
        this.message = message;
    }

    public boolean allowed() {
        return this == ALLOWED;
    }

    /** 200 when allowed, else 401 (no valid key) or 403 (a valid key without the right). */
    public int status() {
        return status;
    }

    public String message() {
        return message;
    }

    /** The {@code {"message": ...}} body of the refusal, as JSON. */
    public String body() {
        return "{\"message\":\"" + message + "\"}";
    }
}
