package com.supermarket.store.counts;

import com.supermarket.store.PlatformProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class CountsConfiguration {

    @Bean
    StoreCounts storeCounts(PlatformProperties platform, CountsProperties counts) {
        return new StoreCounts(platform.maxStores(), platform.maxItemId(), counts.dedupWindowPerStore());
    }
}
