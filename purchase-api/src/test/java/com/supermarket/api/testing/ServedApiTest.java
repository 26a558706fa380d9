package com.supermarket.api.testing;

import org.junit.jupiter.api.BeforeEach;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Base of the tests that run the whole application on random ports: {@link #api} talks to its
 * HTTP port and its management port, and is ready before each test's own set-up runs.
 */
public abstract class ServedApiTest {

    @LocalServerPort
    private int port;

    @LocalManagementPort
    private int managementPort;

    protected ApiClient api;

    @BeforeEach
    void connectApiClient() {
        api = new ApiClient(port, managementPort);
    }
}
