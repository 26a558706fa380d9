package com.supermarket.api.purchase;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Caps on one purchase request. Immutable.
 *
 * @param maxItems     most item lines in one purchase; the standard
 *                     client sends 1..20
 * @param maxBodySize  largest accepted request body; larger is
 *                     a {@code 400}, as the contract says, not a {@code 413}
 */
@ConfigurationProperties("api.purchase")
record PurchaseLimits(@DefaultValue("100") int maxItems, @DefaultValue("64KB") DataSize maxBodySize) {

    PurchaseLimits {
        if (maxItems < 1 || maxBodySize.toBytes() < 1 || maxBodySize.toBytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("api.purchase.max-items and max-body-size must be positive");
        }
    }

    int maxBodyBytes() {
        return (int) maxBodySize.toBytes();
    }
}
