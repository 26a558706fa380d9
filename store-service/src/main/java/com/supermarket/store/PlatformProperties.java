package com.supermarket.store;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The id ranges shared by the whole platform ({@code PLATFORM_MAX_STORES},
 * {@code PLATFORM_MAX_ITEM_ID}).
 *
 * @param maxStores stores are 1..maxStores
 * @param maxItemId items are 1..maxItemId
 */
@ConfigurationProperties("platform")
public record PlatformProperties(int maxStores, int maxItemId) {

    public PlatformProperties {
        if (maxStores < 1 || maxItemId < 1) {
            throw new IllegalArgumentException("platform.max-stores and platform.max-item-id must be positive");
        }
    }
}
