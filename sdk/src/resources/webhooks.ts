import type { CallOptions, ListParams } from "../core/options.js";
import { PageList } from "../core/paging.js";
import type { Requester } from "../core/requester.js";
import { constructEvent } from "../core/webhook-signature.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listEvents,
  listWebhookEndpoints,
  pingWebhookEndpoint,
  resendEvent,
  resendFailedDeliveries,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from "../generated/client/sdk.gen.js";
import type {
  Event,
  FailedDeliveriesResendRequest,
  ListEventsData,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointCreateRequest,
  WebhookEndpointUpdateRequest,
  WebhookSecretRotateRequest,
} from "../generated/client/types.gen.js";

/** Endpoints that receive signed events. */
export class WebhookEndpoints {
  constructor(private readonly requester: Requester) {}

  /** Registers an endpoint; the answer holds its signing `secret` (`whsec_…`), shown only here. */
  create(body: WebhookEndpointCreateRequest, options: CallOptions = {}): Promise<WebhookEndpointCreated> {
    return this.requester.unwrap(createWebhookEndpoint({ ...this.requester.with(options), body }));
  }

  list(options: CallOptions = {}): Promise<WebhookEndpoint[]> {
    return this.requester.unwrap(listWebhookEndpoints({ ...this.requester.with(options) }));
  }

  get(id: string, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.requester.unwrap(getWebhookEndpoint({ ...this.requester.with(options), path: { id } }));
  }

  update(id: string, body: WebhookEndpointUpdateRequest, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.requester.unwrap(updateWebhookEndpoint({ ...this.requester.with(options), path: { id }, body }));
  }

  delete(id: string, options: CallOptions = {}) {
    return this.requester.unwrap(deleteWebhookEndpoint({ ...this.requester.with(options), path: { id } }));
  }

  /** A new secret (returned once); the previous one keeps signing for `overlap_seconds`. */
  rotateSecret(id: string, body: WebhookSecretRotateRequest = {}, options: CallOptions = {}): Promise<WebhookEndpointCreated> {
    return this.requester.unwrap(rotateWebhookEndpointSecret({ ...this.requester.with(options), path: { id }, body }));
  }

  /** Sends a signed `webhook_endpoint.ping` to this endpoint now and answers how the receiver answered. */
  test(id: string, options: CallOptions = {}) {
    return this.requester.unwrap(pingWebhookEndpoint({ ...this.requester.with(options), path: { id } }));
  }
}

export class Webhooks {
  readonly endpoints: WebhookEndpoints;
  /** Verifies a received webhook and returns its event; see `constructEvent`. */
  readonly constructEvent = constructEvent;

  constructor(requester: Requester) {
    this.endpoints = new WebhookEndpoints(requester);
  }
}

/** The events sent to the account's endpoints, with their deliveries. */
export class Events {
  constructor(private readonly requester: Requester) {}

  /** The events, newest first, every page. */
  list(params: ListParams<ListEventsData["query"]> = {}, options: CallOptions = {}): PageList<Event> {
    return new PageList((cursor) =>
      this.requester.unwrap(listEvents({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }

  /** Sends an event (`evt_…`) again to every current endpoint. */
  resend(id: string, options: CallOptions = {}): Promise<Event> {
    return this.requester.unwrap(resendEvent({ ...this.requester.with(options), path: { id } }));
  }

  /** Schedules again the failed deliveries of the events from `from` to `to`; repeat while `more` is true. */
  resendFailed(body: FailedDeliveriesResendRequest, options: CallOptions = {}) {
    return this.requester.unwrap(resendFailedDeliveries({ ...this.requester.with(options), body }));
  }
}
