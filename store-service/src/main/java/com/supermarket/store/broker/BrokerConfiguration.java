package com.supermarket.store.broker;

import com.supermarket.contract.BrokerBeans;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The platform's shared broker beans (settings, topology, set-up): see {@link BrokerBeans}. */
@Configuration(proxyBeanMethods = false)
@Import(BrokerBeans.class)
class BrokerConfiguration {
}
