/* Tests of the HTTP layer's pure parts: backoff, Retry-After, which statuses are retried. */
#include "test.h"
#include "llm/http.h"

#include <math.h>
#include <stdlib.h>

TEST(http_backoff_grows_caps_and_jitters)
{
	CHECK(fabs(http_backoff_s(1, -1, 0.5, 8, 60, 0) - 0.5) < 1e-9);
	CHECK(fabs(http_backoff_s(2, -1, 0.5, 8, 60, 0) - 1.0) < 1e-9);
	CHECK(fabs(http_backoff_s(3, -1, 0.5, 8, 60, 0) - 2.0) < 1e-9);
	CHECK(fabs(http_backoff_s(10, -1, 0.5, 8, 60, 0) - 8.0) < 1e-9);
	CHECK(fabs(http_backoff_s(1000, -1, 0.5, 8, 60, 0) - 8.0) < 1e-9);
	/* jitter takes off at most a quarter */
	double j = http_backoff_s(2, -1, 0.5, 8, 60, 0.999);
	CHECK(j > 0.75 && j < 1.0);
	CHECK(http_backoff_s(2, -1, 0.5, 8, 60, 5) >= 0.75);
}

TEST(http_backoff_honours_retry_after_with_a_cap)
{
	CHECK(fabs(http_backoff_s(1, 1, 0.5, 8, 60, 0.5) - 1) < 1e-9);
	CHECK(fabs(http_backoff_s(5, 0, 0.5, 8, 60, 0.5) - 0) < 1e-9);
	CHECK(fabs(http_backoff_s(1, 3600, 0.5, 8, 60, 0.5) - 60) < 1e-9);
}

TEST(http_parse_retry_after_forms)
{
	CHECK(fabs(http_parse_retry_after("1", 0) - 1) < 1e-9);
	CHECK(fabs(http_parse_retry_after(" 2.5\r\n", 0) - 2.5) < 1e-9);
	CHECK(http_parse_retry_after("", 0) < 0);
	CHECK(http_parse_retry_after("soon", 0) < 0);
	CHECK(http_parse_retry_after("-3", 0) < 0);
	CHECK(http_parse_retry_after("5x", 0) < 0);
	/* HTTP date: Wed, 21 Oct 2015 07:28:00 GMT = 1445412480 */
	CHECK(fabs(http_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470) - 10) < 1e-9);
	CHECK(fabs(http_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490) - 0) < 1e-9);
}

TEST(http_retryable_statuses)
{
	CHECK(http_status_retryable(429));
	CHECK(http_status_retryable(500));
	CHECK(http_status_retryable(503));
	CHECK(http_status_retryable(529));
	CHECK(http_status_retryable(408));
	CHECK(!http_status_retryable(400));
	CHECK(!http_status_retryable(401));
	CHECK(!http_status_retryable(403));
	CHECK(!http_status_retryable(404));
	CHECK(!http_status_retryable(422));
	CHECK(!http_status_retryable(200));
}

TEST(http_connect_refused_is_reported_and_retried)
{
	struct http *h = http_open();
	CHECK(h != NULL);
	struct http_request req = { .url = "http://127.0.0.1:9/v1/chat/completions",
				    .shown_url = "http://127.0.0.1:9/v1", .body = "{}", .body_len = 2,
				    .max_retries = 2, .backoff_base_s = 0.001 };
	struct http_response res = HTTP_RESPONSE_INIT;
	char *err = NULL;
	CHECK_INT(http_post(h, &req, &res, &err), HTTP_E_CONNECT);
	CHECK_STR(err, "cannot connect to http://127.0.0.1:9/v1: Connection refused");
	CHECK_INT(res.attempts, 3);
	free(err);
	http_response_release(&res);
	http_close(h);
}
