# The image of one module: purchase-api, store-service, purchases-service or load-client.
# Build from the repository root after the module's jar exists
# (./mvnw -B -ntp -pl MODULE -am package -DskipTests):
#   docker build --build-arg MODULE=purchase-api -t supermarket/purchase-api:0.1.0 .
# The context is the repository root so every image can share deploy/docker/HealthCheck.java;
# the root .dockerignore keeps that context down to the jars and that file.
# Run: docker run --rm supermarket/load-client:0.1.0 run --help

# The base images: the official Temurin ones by default; scripts/images.sh prints local stand-ins
# for a machine without a registry (--build-arg JAVA_BUILD_IMAGE=... JAVA_RUNTIME_IMAGE=...).
ARG JAVA_BUILD_IMAGE=eclipse-temurin:21.0.8_9-jdk-noble
ARG JAVA_RUNTIME_IMAGE=eclipse-temurin:21.0.8_9-jre-noble
# Which module's image; the stage of that name below is the image.
ARG MODULE

# Build stage: split a service's fat jar into Spring Boot's layers (dependencies change rarely,
# the application often) so a rebuild ships only the small top layer, and compile the health
# check. The load client's jar is a plain picocli main, without the Spring classes the tools jar
# mode runs on: it is kept whole (empty layers, which only the services' stage copies).
FROM ${JAVA_BUILD_IMAGE} AS build
ARG MODULE
WORKDIR /build
COPY ${MODULE}/target/${MODULE}-0.1.0-SNAPSHOT.jar app.jar
RUN if jar tf app.jar | grep -q '^BOOT-INF/lib/spring-core-'; then \
        java -Djarmode=tools -jar app.jar extract --layers --launcher --destination extracted; \
    else \
        mkdir -p extracted/dependencies extracted/spring-boot-loader extracted/snapshot-dependencies extracted/application; \
    fi
COPY deploy/docker/HealthCheck.java .
RUN javac --release 21 -d healthcheck HealthCheck.java

# What every image has: a fixed numeric uid, so Kubernetes' runAsNonRoot can verify it without
# resolving names.
FROM ${JAVA_RUNTIME_IMAGE} AS runtime
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home --shell /usr/sbin/nologin app
WORKDIR /app

# The three services: the layered jar, started by Spring Boot's launcher, and a health check.
FROM runtime AS service
COPY --from=build /build/extracted/dependencies/ ./
COPY --from=build /build/extracted/spring-boot-loader/ ./
COPY --from=build /build/extracted/snapshot-dependencies/ ./
COPY --from=build /build/extracted/application/ ./
COPY --from=build /build/healthcheck/ /opt/healthcheck/
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=70 -XX:+ExitOnOutOfMemoryError"
# Readiness (on MANAGEMENT_PORT) includes the broker (and the database): "healthy" means able to
# serve. The checking JVM is kept tiny because it runs inside the service's memory limit, and
# started without JAVA_TOOL_OPTIONS, whose flags (a collector, a heap share) are the service's.
HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=3 \
    CMD ["env", "-u", "JAVA_TOOL_OPTIONS", "java", "-Xmx8m", "-Xss256k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", "/opt/healthcheck", "HealthCheck", "/actuator/health/readiness"]
ENTRYPOINT ["java", "org.springframework.boot.loader.launch.JarLauncher"]

# Each service's port and management port (actuator: health, metrics), its defaults.
FROM service AS purchase-api
ENV SERVER_PORT=8080 \
    MANAGEMENT_PORT=9080
EXPOSE 8080 9080
USER 10001:10001

# The counts' state directory belongs to the app user, so a fresh named volume mounted there
# (compose) inherits that owner; Kubernetes gets the same from the pod's fsGroup.
FROM service AS store-service
RUN mkdir -p /var/lib/store-service && chown 10001:10001 /var/lib/store-service
ENV SERVER_PORT=8081 \
    MANAGEMENT_PORT=9081 \
    STORE_DURABILITY_STATE_DIR=/var/lib/store-service
EXPOSE 8081 9081
USER 10001:10001

FROM service AS purchases-service
ENV SERVER_PORT=8082 \
    MANAGEMENT_PORT=9082
EXPOSE 8082 9082
USER 10001:10001

# The load generator, a command-line tool, not a server: its jar whole (built and run once per
# benchmark, so layers would buy nothing), results in /results (mount a volume
# there to keep them). A one-off run has no service to probe: it is alive exactly while it runs,
# and its exit status is its result.
FROM runtime AS load-client
COPY --from=build /build/app.jar app.jar
RUN mkdir /results && chown 10001:10001 /results
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"
HEALTHCHECK NONE
USER 10001:10001
ENTRYPOINT ["java", "-jar", "/app/app.jar"]

# The image: the stage of the module asked for.
FROM ${MODULE}
