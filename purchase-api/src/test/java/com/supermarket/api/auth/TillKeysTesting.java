package com.supermarket.api.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Keys and their hash lines as scripts/till-keys.sh writes them, for the tests. */
final class TillKeysTesting {

    private TillKeysTesting() {
    }

    static String sha256Hex(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String line(String scope, String key, String... fields) {
        return scope + " " + sha256Hex(key) + (fields.length == 0 ? "" : " " + String.join(" ", fields)) + "\n";
    }
}
