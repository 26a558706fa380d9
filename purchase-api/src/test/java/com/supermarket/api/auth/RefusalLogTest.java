package com.supermarket.api.auth;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RefusalLogTest {

    @Test
    void writesAtMostTheRatePerSecondAndCountsWhatItDropped() {
        Logger logger = (Logger) LoggerFactory.getLogger("refusal-log-test");
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        AtomicLong nanos = new AtomicLong(1_000);
        RefusalLog log = new RefusalLog(logger, 3, nanos::get);

        for (int i = 0; i < 10; i++) {
            log.refused("refused " + i);
        }
        nanos.addAndGet(1_000_000_000L);
        log.refused("refused 10");

        assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
                "refused 0", "refused 1", "refused 2", "refused 10 (and 7 refusals not logged before this one)");
    }
}
