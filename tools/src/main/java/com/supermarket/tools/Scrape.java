package com.supermarket.tools;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** One read by a sampler: a missed sample is an empty one, never the end of the sampling. */
public final class Scrape {

    private Scrape() {
    }

    /** The body of a {@code 200} answer to {@code request}, or "" for any other answer or failure. */
    public static String body(HttpClient http, HttpRequest request) {
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
