package com.supermarket.purchases.ingest;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class IngestConfiguration {

    @Bean
    StorageState storageState() {
        return new StorageState();
    }
}
