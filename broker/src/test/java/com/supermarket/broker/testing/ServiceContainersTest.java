package com.supermarket.broker.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/** The start of a test container, with a container whose start fails as told (no Docker needed). */
class ServiceContainersTest {

    private static final String PORT_CLASH = "driver failed programming external connectivity on endpoint x: "
            + "Bind for :::32779 failed: port is already allocated";

    @Test
    void aPortClashIsStartedAgainAfterRemovingTheContainer() {
        ScriptedContainer container = new ScriptedContainer(PORT_CLASH, PORT_CLASH, null);

        ServiceContainers.startRetryingPortClashes(container);

        assertThat(container.calls).containsExactly("start", "stop", "start", "stop", "start");
    }

    @Test
    void portClashesGiveUpAfterTheLastAttempt() {
        ScriptedContainer container = new ScriptedContainer(PORT_CLASH, PORT_CLASH, PORT_CLASH, null);

        assertThatThrownBy(() -> ServiceContainers.startRetryingPortClashes(container))
                .hasRootCauseMessage(PORT_CLASH);
        assertThat(container.calls).filteredOn("start"::equals).hasSize(ServiceContainers.PORT_CLASH_ATTEMPTS);
    }

    @Test
    void anyOtherFailureIsThrownAtOnce() {
        ScriptedContainer container = new ScriptedContainer("No such image: supermarket-local/rabbitmq", null);

        assertThatThrownBy(() -> ServiceContainers.startRetryingPortClashes(container))
                .hasRootCauseMessage("No such image: supermarket-local/rabbitmq");
        assertThat(container.calls).containsExactly("start");
    }

    /** A container whose starts fail, in turn, with the given messages (null: it starts). */
    private static final class ScriptedContainer extends GenericContainer<ScriptedContainer> {
        private final Deque<String> failures = new ArrayDeque<>();
        private final List<String> calls = new ArrayList<>();

        ScriptedContainer(String... failures) {
            super(DockerImageName.parse("scripted:latest"));
            for (String failure : failures) {
                this.failures.add(failure == null ? "" : failure);
            }
        }

        @Override
        public void start() {
            calls.add("start");
            String failure = failures.poll();
            if (failure != null && !failure.isEmpty()) {
                throw new ContainerLaunchException("Container startup failed", new IllegalStateException(failure));
            }
        }

        @Override
        public void stop() {
            calls.add("stop");
        }
    }
}
