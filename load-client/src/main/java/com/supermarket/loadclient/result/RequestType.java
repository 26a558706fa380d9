package com.supermarket.loadclient.result;

/**
 * The three requests the load client sends. {@link #csvName()} is the value of the CSV's
 * {@code request_type} column. Immutable and thread-safe.
 */
public enum RequestType {
    /** {@code POST /purchase/{storeID}/customer/{custID}/date/{date}}. */
    POST("POST"),
    /** {@code GET /items/store/{storeID}}: top items of a store. */
    GET_STORE("GET_STORE"),
    /** {@code GET /items/top10/{itemID}}: top stores for an item. */
    GET_TOP10("GET_TOP10");

    private final String csvName;

    RequestType(String csvName) {
        this.csvName = csvName;
    }

    /** The name written in CSV records. */
    public String csvName() {
        return csvName;
    }
}
