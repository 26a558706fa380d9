package com.supermarket.api.page;

import java.util.concurrent.TimeUnit;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.web.servlet.config.annotation.ResourceHandlerRegistry;
import org.springframework.web.servlet.config.annotation.ViewControllerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The managers' sales page, built by Vite into {@code static/sales/} of the jar (purchase-api's
 * pom): {@code /} and {@code /sales} lead to {@code /sales/}, which is its {@code index.html};
 * the hashed assets under {@code /sales/assets/} are cached for a year, the page itself is
 * revalidated on every load. Everything under {@code /sales} carries the page's security headers
 * ({@link SalesPageHeaders}); the API's own answers do not (the POST path stays as it was). The
 * page reads the GET API like any client, with the till key it is given: nothing here reads or
 * checks keys.
 */
@Configuration(proxyBeanMethods = false)
class SalesPageConfiguration implements WebMvcConfigurer {

    /** Where the page is. */
    static final String PAGE = "/sales/";

    @Override
    public void addViewControllers(ViewControllerRegistry registry) {
        registry.addRedirectViewController("/", PAGE).setStatusCode(HttpStatus.FOUND);
        registry.addRedirectViewController("/sales", PAGE).setStatusCode(HttpStatus.FOUND);
        registry.addViewController(PAGE).setViewName("forward:" + PAGE + "index.html");
    }

    @Override
    public void addResourceHandlers(ResourceHandlerRegistry registry) {
        // File names carry a hash of their content: a changed file is a new name.
        registry.addResourceHandler(PAGE + "assets/**").addResourceLocations("classpath:/static" + PAGE + "assets/")
                .setCacheControl(CacheControl.maxAge(365, TimeUnit.DAYS).cachePublic().immutable());
    }

    @Bean
    FilterRegistrationBean<SalesPageHeaders> salesPageHeaders() {
        FilterRegistrationBean<SalesPageHeaders> registration = new FilterRegistrationBean<>(new SalesPageHeaders());
        registration.addUrlPatterns("/sales/*");
        return registration;
    }
}
