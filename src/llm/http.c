/* HTTP POST with caps, deadlines and retries, on libcurl; see http.h. */
#include "llm/http.h"
#include "common/proc.h"
#include "util/xalloc.h"
#include "common/version.h"

#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_BODY ((size_t)8 << 20)

struct http {
	CURL *curl;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

struct http *http_open(void)
{
	pthread_once(&global_once, global_init);
	if (global_rc)
		return NULL;
	CURL *c = curl_easy_init();
	if (!c)
		return NULL;
	struct http *h = xcalloc(1, sizeof(*h));
	h->curl = c;
	return h;
}

void http_close(struct http *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	free(h);
}

void http_response_release(struct http_response *res)
{
	strbuf_release(&res->body);
	res->status = 0;
	res->body_cut = 0;
	res->retry_after_s = -1;
	res->request_id[0] = '\0';
}

int http_status_retryable(long status)
{
	return status == 408 || status == 409 || status == 429 || status >= 500;
}

double http_backoff_s(int retry, double retry_after_s, double base_s, double max_s,
		      double retry_after_max_s, double jitter01)
{
	if (retry_after_s >= 0)
		return retry_after_s < retry_after_max_s ? retry_after_s : retry_after_max_s;
	if (retry < 1)
		retry = 1;
	double d = base_s * ldexp(1.0, retry > 30 ? 30 : retry - 1);
	if (d > max_s)
		d = max_s;
	if (jitter01 < 0)
		jitter01 = 0;
	if (jitter01 >= 1)
		jitter01 = 0.999999;
	return d * (1.0 - 0.25 * jitter01);
}

double http_parse_retry_after(const char *value, double now_epoch)
{
	while (*value == ' ' || *value == '\t')
		value++;
	if (!*value)
		return -1;
	if (isdigit((unsigned char)*value)) {
		char *end;
		errno = 0;
		double s = strtod(value, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (errno || *end || !isfinite(s) || s < 0)
			return -1;
		return s;
	}
	char date[128];
	snprintf(date, sizeof(date), "%s", value);
	date[strcspn(date, "\r\n")] = '\0';
	time_t t = curl_getdate(date, NULL);
	if (t == (time_t)-1)
		return -1;
	double d = (double)t - now_epoch;
	return d > 0 ? d : 0;
}

/* One attempt's state, shared by libcurl's callbacks. */
struct attempt {
	const struct http_request *req;
	struct http_response *res;
	CURL *curl;
	size_t cap;
	int status_known, streaming;
	int too_big, aborted;
	char *hook_err;
	double retry_after_ms;
};

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct attempt *a = ud;
	size_t n = size * nmemb;
	if (!a->status_known) {
		long status = 0;
		curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
		a->res->status = status;
		a->status_known = 1;
		a->streaming = a->req->hooks && status / 100 == 2;
	}
	if (strbuf_add(&a->res->body, p, n)) {
		if (!a->streaming) {
			a->too_big = 1;
			return 0;
		}
		/* a stream's raw copy is only a record: keep what fits */
		if (!a->res->body_cut) {
			size_t room = a->cap - a->res->body.len;
			strbuf_add(&a->res->body, p, room < n ? room : n);
			a->res->body_cut = 1;
		}
	}
	if (a->streaming && a->req->hooks->data &&
	    a->req->hooks->data(a->req->hooks->ctx, p, n, &a->hook_err)) {
		a->aborted = 1;
		return 0;
	}
	return n;
}

static int header_is(const char *line, size_t n, const char *name, const char **value)
{
	size_t k = strlen(name);
	if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
		return 0;
	*value = line + k + 1;
	return 1;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct attempt *a = ud;
	size_t n = size * nmemb;
	char line[256];
	const char *v;
	if (n >= 5 && !strncmp(p, "HTTP/", 5)) {
		/* a new response (after a 100 Continue, say): forget the previous one's headers */
		a->res->retry_after_s = -1;
		a->res->request_id[0] = '\0';
		a->retry_after_ms = -1;
		return n;
	}
	if (n >= sizeof(line))
		return n; /* no header we read is this long */
	memcpy(line, p, n);
	line[n] = '\0';
	if (header_is(line, n, "retry-after-ms", &v)) {
		a->retry_after_ms = http_parse_retry_after(v, 0);
	} else if (header_is(line, n, "retry-after", &v)) {
		a->res->retry_after_s = http_parse_retry_after(v, (double)time(NULL));
	} else if (header_is(line, n, "x-request-id", &v) || header_is(line, n, "request-id", &v)) {
		while (*v == ' ')
			v++;
		size_t k = strcspn(v, "\r\n");
		if (k >= sizeof(a->res->request_id))
			k = sizeof(a->res->request_id) - 1;
		for (size_t i = 0; i < k; i++)
			a->res->request_id[i] = isprint((unsigned char)v[i]) ? v[i] : '?';
		a->res->request_id[k] = '\0';
	}
	return n;
}

static const char *shown(const struct http_request *req)
{
	return req->shown_url ? req->shown_url : req->url;
}

static int attempt_once(struct http *h, const struct http_request *req, struct http_response *res,
			char **err)
{
	CURL *c = h->curl;
	struct attempt a = { req, res, c, req->max_body ? req->max_body : DEFAULT_MAX_BODY,
			     0, 0, 0, 0, NULL, -1 };
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	int rc = HTTP_OK;
	double connect_s = req->connect_timeout_s > 0 ? req->connect_timeout_s : 10;
	double timeout_s = req->timeout_s > 0 ? req->timeout_s : 600;

	strbuf_release(&res->body);
	res->body.cap = a.cap;
	res->status = 0;
	res->body_cut = 0;
	res->retry_after_s = -1;
	res->request_id[0] = '\0';
	if (req->hooks && req->hooks->begin)
		req->hooks->begin(req->hooks->ctx);

	for (const char *const *hp = req->headers; hp && *hp; hp++)
		hdrs = curl_slist_append(hdrs, *hp);
	/* no "Expect: 100-continue" round trip for big prompts */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (!hdrs)
		die("out of memory");

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? req->body : "");
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->body_len : 0));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "cutegen/" CUTEGEN_VERSION);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_s * 1000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);

	CURLcode cc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status)
		res->status = status;
	if (a.retry_after_ms >= 0)
		res->retry_after_s = a.retry_after_ms / 1000.0;

	switch (cc) {
	case CURLE_OK:
		if (req->hooks && req->hooks->end && res->status / 100 == 2) {
			int e = req->hooks->end(req->hooks->ctx);
			if (e == HTTP_STREAM_TRUNCATED) {
				rc = HTTP_E_TRUNCATED;
				*err = xasprintf("the reply stream from %s ended before its end marker "
						 "(connection closed early)", shown(req));
			} else if (e > 0) {
				res->status = e;
			}
		}
		break;
	case CURLE_WRITE_ERROR:
		if (a.too_big) {
			rc = HTTP_E_TOOBIG;
			*err = xasprintf("the reply from %s passed the cap of %zu bytes", shown(req),
					 a.cap);
		} else if (a.aborted) {
			rc = HTTP_E_ABORTED;
			*err = a.hook_err ? a.hook_err : xasprintf("reply from %s refused", shown(req));
			a.hook_err = NULL;
		} else {
			rc = HTTP_E_OTHER;
			*err = xasprintf("cannot read the reply from %s: %s", shown(req), errbuf);
		}
		break;
	case CURLE_COULDNT_CONNECT: {
		long os_errno = 0;
		curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
		rc = HTTP_E_CONNECT;
		*err = xasprintf("cannot connect to %s: %s", shown(req),
				 os_errno ? strerror((int)os_errno) : errbuf);
		break;
	}
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		rc = HTTP_E_RESOLVE;
		*err = xasprintf("cannot connect to %s: %s; check the host name in the URL",
				 shown(req), errbuf);
		break;
	case CURLE_OPERATION_TIMEDOUT: {
		curl_off_t connect_us = 0;
		curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connect_us);
		rc = HTTP_E_TIMEOUT;
		if (!connect_us && !res->status)
			*err = xasprintf("cannot connect to %s within %g s", shown(req), connect_s);
		else
			*err = xasprintf("no complete reply from %s within %g s; raise --timeout if "
					 "the model needs longer", shown(req), timeout_s);
		break;
	}
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		rc = HTTP_E_DROPPED;
		*err = xasprintf("the connection to %s dropped mid-reply (%s)", shown(req),
				 errbuf[0] ? errbuf : curl_easy_strerror(cc));
		break;
	default:
		rc = HTTP_E_OTHER;
		*err = xasprintf("request to %s failed: %s", shown(req),
				 errbuf[0] ? errbuf : curl_easy_strerror(cc));
		break;
	}
	free(a.hook_err);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	return rc;
}

static double jitter(void)
{
	static uint64_t s;
	if (!s)
		s = ((uint64_t)(now_s() * 1e9) ^ ((uint64_t)getpid() << 32)) | 1;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (double)(s >> 11) / 9007199254740992.0;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int http_post(struct http *h, const struct http_request *req, struct http_response *res,
	      char **err)
{
	double start = now_s();
	double base = req->backoff_base_s > 0 ? req->backoff_base_s : 0.5;
	double max = req->backoff_max_s > 0 ? req->backoff_max_s : 8;
	double ra_max = req->retry_after_max_s > 0 ? req->retry_after_max_s : 60;
	int rc;
	*err = NULL;
	for (int attempt = 1;; attempt++) {
		rc = attempt_once(h, req, res, err);
		res->attempts = attempt;
		int again = rc == HTTP_E_CONNECT || rc == HTTP_E_TIMEOUT || rc == HTTP_E_DROPPED ||
			    rc == HTTP_E_TRUNCATED ||
			    (rc == HTTP_OK && http_status_retryable(res->status));
		if (!again || attempt > req->max_retries)
			break;
		free(*err);
		*err = NULL;
		sleep_s(http_backoff_s(attempt, res->retry_after_s, base, max, ra_max, jitter()));
	}
	res->seconds = now_s() - start;
	return rc;
}
