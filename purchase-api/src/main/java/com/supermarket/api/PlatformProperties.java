package com.supermarket.api;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The id ranges of the platform, shared by every feature of the API. Immutable.
 *
 * @param maxStores store ids are 1..maxStores ({@code PLATFORM_MAX_STORES})
 * @param maxItemId item ids are 1..maxItemId ({@code PLATFORM_MAX_ITEM_ID})
 */
@ConfigurationProperties("platform")
public record PlatformProperties(@DefaultValue("1024") int maxStores, @DefaultValue("100000") int maxItemId) {

    public PlatformProperties {
        if (maxStores < 1 || maxItemId < 1) {
            throw new IllegalArgumentException("platform.max-stores and platform.max-item-id must be positive");
        }
    }

    public boolean isKnownStore(long storeId) {
        return storeId >= 1 && storeId <= maxStores;
    }

    public boolean isKnownItem(long itemId) {
        return itemId >= 1 && itemId <= maxItemId;
    }
}
